/**
 * Response serializers compiled once per process, whatever the number of apps built in it.
 *
 * Fastify compiles a fast-json-stringify function for every response schema of every route
 * when an app becomes ready: about a third of building one. A process builds one app in
 * production, but the test suite builds hundreds, each with the same schemas. The compiled
 * function depends only on the schema and the serializer options (no schema is shared
 * through addSchema here), so it is kept under the JSON of both and handed to the next app
 * that asks for the same.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

const compile: SerializerFactory = SerializerSelector();
const compiled = new Map<string, Serializer>();

/** Fastify's own serializer factory, with the compiled functions shared across apps. */
export const buildSharedSerializer: SerializerFactory = (externalSchemas, options) => {
  const compiler = compile(externalSchemas, options);
  // Schemas added with addSchema would make a function depend on more than its schema.
  if (externalSchemas !== undefined && Object.keys(externalSchemas as object).length > 0) return compiler;
  const optionsKey = JSON.stringify(options ?? {});
  return (route) => {
    const key = `${optionsKey}\n${JSON.stringify(route.schema)}`;
    let serializer = compiled.get(key);
    if (serializer === undefined) {
      serializer = compiler(route);
      compiled.set(key, serializer);
    }
    return serializer;
  };
};
