/**
 * Writes packages/client/src/types.ts: a plain TypeScript declaration for every wire schema of
 * the server (each TypeBox schema exported by src/http/schemas.ts or src/http/event-schemas.ts
 * that carries an `$id`).
 *
 * The client package has no dependencies, so it cannot import TypeBox's `Static<>` types at
 * run time or in its published `.d.ts`; this turns the same schemas into interfaces instead.
 * The output is committed; test/client/generated-types.test.ts fails when it is stale, and
 * `npm run generate:client` (this script) brings it up to date. A new `$id` schema in
 * src/http/schemas.ts becomes a client type by running it once.
 *
 *     node scripts/generate-client-types.ts          write the file
 *     node scripts/generate-client-types.ts --check  exit 1 if the file is not what it would write
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as eventSchemas from '../src/http/event-schemas.ts';
import * as schemas from '../src/http/schemas.ts';

export const TYPES_FILE = fileURLToPath(new URL('../packages/client/src/types.ts', import.meta.url));

interface JsonSchema {
  readonly $id?: string;
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly items?: JsonSchema;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly const?: unknown;
  readonly enum?: readonly unknown[];
  readonly additionalProperties?: boolean | JsonSchema;
}

const HEADER = `/**
 * The service's wire types, generated from the server's TypeBox schemas (src/http/schemas.ts)
 * by scripts/generate-client-types.ts. Do not edit: run \`npm run generate:client\`.
 */
`;

function isNamedSchema(value: unknown): value is JsonSchema & { $id: string } {
  return typeof value === 'object' && value !== null && typeof (value as JsonSchema).$id === 'string';
}

function comment(text: string | undefined, indent: string): string {
  if (text === undefined || text === '') return '';
  return `${indent}/** ${text.replaceAll('*/', '*\\/')} */\n`;
}

function propertyName(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

function objectBody(schema: JsonSchema, indent: string): string {
  const required = new Set(schema.required ?? []);
  let body = '{\n';
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    body += comment(property.description, `${indent}  `);
    body += `${indent}  ${propertyName(name)}${required.has(name) ? '' : '?'}: ${typeOf(property, `${indent}  `)};\n`;
  }
  return `${body}${indent}}`;
}

/** The schema being declared: a named schema inside it is referred to by its name. */
let declaring: JsonSchema | undefined;

/**
 * Named schemas by their properties object: a copy made without its `$id` (the events' `data`
 * is LinkDetails spread into a new object, event-schemas.ts) shares that object, and is
 * referred to by the original's name instead of being written out again.
 */
const namedByProperties = new Map<object, string>();

/** The TypeScript type of one JSON Schema, for the subset the route schemas use. */
function typeOf(schema: JsonSchema, indent: string): string {
  if (schema !== declaring && schema.$id !== undefined) return schema.$id;
  const copied = schema.properties === undefined ? undefined : namedByProperties.get(schema.properties);
  if (copied !== undefined && schema.properties !== declaring?.properties) return copied;
  if (schema.$ref !== undefined) return schema.$ref.replace(/^#\/components\/schemas\//, '').replace(/^#?/, '');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum !== undefined) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives !== undefined) return alternatives.map((alternative) => typeOf(alternative, indent)).join(' | ');
  if (Array.isArray(schema.type)) return (schema.type as string[]).map((type) => typeOf({ ...schema, type }, indent)).join(' | ');
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = schema.items === undefined ? 'unknown' : typeOf(schema.items, indent);
      return /[ |]/.test(item) && !item.startsWith('{') ? `(${item})[]` : `${item}[]`;
    }
    case 'object':
      if (schema.properties === undefined) return 'Record<string, unknown>';
      return objectBody(schema, indent);
    default:
      return 'unknown';
  }
}

/** The generated file's text: one declaration per named schema, in name order. */
export function generateClientTypes(): string {
  const named = ([...Object.values(schemas), ...Object.values(eventSchemas)] as unknown[])
    .filter(isNamedSchema)
    .sort((a, b) => a.$id.localeCompare(b.$id));
  namedByProperties.clear();
  for (const schema of named) if (schema.properties !== undefined) namedByProperties.set(schema.properties, schema.$id);
  let text = HEADER;
  for (const schema of named) {
    declaring = schema;
    text += `\n${comment(schema.description, '')}`;
    text += schema.type === 'object' && schema.properties !== undefined
      ? `export interface ${schema.$id} ${objectBody(schema, '')}\n`
      : `export type ${schema.$id} = ${typeOf(schema, '')};\n`;
  }
  return text;
}

if (import.meta.main) {
  const text = generateClientTypes();
  if (process.argv.includes('--check')) {
    const current = readFileSync(TYPES_FILE, 'utf8');
    if (current !== text) {
      process.stderr.write(`${TYPES_FILE} is stale: run "npm run generate:client"\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(TYPES_FILE, text);
    process.stdout.write(`wrote ${TYPES_FILE}\n`);
  }
}
