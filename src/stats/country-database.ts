/**
 * The offline IP → country database shipped as an npm package
 * (`@ip-location-db/geo-whois-asn-country-mmdb`: the package CC0, the data CC BY 4.0 by the
 * NRO; docs/licences.md). Read once per process on first use, never fetched.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const DATABASE = '@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb';
let loaded: Buffer | undefined;

/** The database's bytes (about 8 MB), shared by every app of the process. */
export function loadCountryDatabase(): Buffer {
  loaded ??= readFileSync(createRequire(import.meta.url).resolve(DATABASE));
  return loaded;
}
