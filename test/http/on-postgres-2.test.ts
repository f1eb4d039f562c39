/** The second half of the HTTP suite on PostgreSQL (on-postgres.ts). */
import { httpSuiteOnPostgres } from './on-postgres.ts';

httpSuiteOnPostgres(1);
