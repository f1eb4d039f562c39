import { DomainError, ErrorCode, invalid } from '../errors.ts';

/**
 * Reads named single-valued string parameters from the query string and, for POST, from a
 * JSON or form body. A name that appears twice (repeated in the query, or in both query and
 * body) is refused, as is a body value that is not a string. Empty strings count as absent.
 */
export function readParameters<const Name extends string>(
  names: readonly Name[],
  query: unknown,
  body: unknown,
  { keepEmpty = false }: { keepEmpty?: boolean } = {},
): Record<Name, string | undefined> {
  const fromQuery = (query ?? {}) as Record<string, unknown>;
  let fromBody: Record<string, unknown> = {};
  if (body !== undefined && body !== null) {
    if (typeof body !== 'object' || Array.isArray(body)) throw invalid('the request body must be a JSON object or a form');
    fromBody = body as Record<string, unknown>;
  }
  const result = {} as Record<Name, string | undefined>;
  for (const name of names) {
    const inQuery = Object.hasOwn(fromQuery, name) ? fromQuery[name] : undefined;
    const inBody = Object.hasOwn(fromBody, name) ? fromBody[name] : undefined;
    if (Array.isArray(inQuery) || Array.isArray(inBody) || (inQuery !== undefined && inBody !== undefined)) {
      if (Array.isArray(inBody) && inQuery === undefined && !isFormArray(inBody)) {
        throw invalid(`the parameter "${name}" must be a string`);
      }
      throw new DomainError(ErrorCode.DuplicateParameter, `the parameter "${name}" was given more than once`);
    }
    const value = inQuery ?? inBody;
    if (value !== undefined && typeof value !== 'string') throw invalid(`the parameter "${name}" must be a string`);
    // Only a JSON body can carry a lone surrogate ("\ud800"); stored, it would become U+FFFD.
    if (value !== undefined && !value.isWellFormed()) throw invalid(`${name} must be well-formed Unicode text`);
    result[name] = value === '' && !keepEmpty ? undefined : value;
  }
  return result;
}

const namesOfSchema = new WeakMap<object, readonly string[]>();

/**
 * The parameters a route reads, named once: the properties of the TypeBox object schema that
 * documents them (its query or its body), in the schema's order (readParameters reports the
 * first bad one), without `auth` (the access code is the authentication hook's, not the
 * route's). A new parameter goes in the schema only. Worked out once per schema.
 */
export function parameterNames<const Properties extends Readonly<Record<string, unknown>>>(
  schema: { readonly properties: Properties },
): readonly Exclude<keyof Properties & string, 'auth'>[] {
  let names = namesOfSchema.get(schema);
  if (names === undefined) {
    names = Object.freeze(Object.keys(schema.properties).filter((name) => name !== 'auth'));
    namesOfSchema.set(schema, names);
  }
  return names as readonly Exclude<keyof Properties & string, 'auth'>[];
}

/** A repeated form field parses to an array of strings; a JSON array may hold anything. */
function isFormArray(value: unknown[]): boolean {
  return value.length > 1 && value.every((item) => typeof item === 'string');
}

/**
 * A JSON body's values in the form the query and a form would carry them: `max_visits` as a
 * JSON number becomes its digits, `tags` as a JSON array of strings becomes them
 * comma-joined (an item holding a comma, or anything but a string, is refused),
 * `forward_query` as a boolean becomes `true` or `false`, and `rules` as an array becomes its
 * JSON text. Other bodies are returned as they are.
 */
export function normaliseDetailsBody(body: unknown, isJson: boolean): unknown {
  if (!isJson || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const fields = body as Record<string, unknown>;
  const tags = fields['tags'];
  const maxVisits = fields['max_visits'];
  const forwardQuery = fields['forward_query'];
  const rules = fields['rules'];
  if (!Array.isArray(tags) && typeof maxVisits !== 'number' && typeof forwardQuery !== 'boolean' && !Array.isArray(rules)) return body;
  const copy: Record<string, unknown> = { ...fields };
  if (typeof forwardQuery === 'boolean') copy['forward_query'] = String(forwardQuery);
  // The rules' own text, as a query or a form carries them; rules.ts reads it.
  if (Array.isArray(rules)) copy['rules'] = JSON.stringify(rules);
  if (Array.isArray(tags)) {
    if (!tags.every((tag) => typeof tag === 'string' && !tag.includes(','))) {
      throw invalid('tags must be a string or a JSON array of strings without commas');
    }
    copy['tags'] = tags.join(',');
  }
  if (typeof maxVisits === 'number') copy['max_visits'] = Number.isFinite(maxVisits) ? String(maxVisits) : 'invalid';
  return copy;
}
