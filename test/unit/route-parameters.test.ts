/**
 * The parameters a route reads are the properties of its schema (parameterNames), so the
 * query and the body schemas of one route must name the same ones: a parameter added to one
 * and not the other would be documented in one place and read (or refused) in the other.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Type } from 'typebox';
import { parameterNames } from '../../src/http/parameters.ts';
import {
  BulkCreateBody, CreateApiKeyBody, CreateApiKeyQuery, CreateLinkBody, CreateLinkPostQuery, CreateLinkQuery, CreateWebhookBody,
  CreateWebhookQuery, UpdateLinkBody, UpdateLinkQuery,
} from '../../src/http/schemas.ts';

describe('parameterNames', () => {
  test('answers the schema\'s properties in their order, without the access code', () => {
    const schema = Type.Object({ b: Type.String(), auth: Type.Optional(Type.String()), a: Type.Optional(Type.String()) });
    assert.deepEqual(parameterNames(schema), ['b', 'a']);
  });

  test('works a schema out once and answers a list that cannot be changed', () => {
    const names = parameterNames(CreateLinkBody);
    assert.equal(parameterNames(CreateLinkBody), names);
    assert.ok(Object.isFrozen(names));
  });
});

describe('a route\'s query and body schemas name the same parameters', () => {
  type ObjectSchema = { readonly properties: Readonly<Record<string, unknown>> };
  const cases: Record<string, readonly ObjectSchema[]> = {
    'create (GET, POST query, POST body, bulk item)': [CreateLinkQuery, CreateLinkPostQuery, CreateLinkBody, BulkCreateBody.items],
    'edit (query, body)': [UpdateLinkQuery, UpdateLinkBody],
    'create webhook (query, body)': [CreateWebhookQuery, CreateWebhookBody],
    'create API key (query, body)': [CreateApiKeyQuery, CreateApiKeyBody],
  };
  for (const [route, schemas] of Object.entries(cases)) {
    test(route, () => {
      const [first, ...rest] = schemas.map((schema) => parameterNames(schema));
      assert.ok(first!.length > 0);
      for (const names of rest) assert.deepEqual(names, first);
    });
  }
});
