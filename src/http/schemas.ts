import { Type } from 'typebox';

/**
 * Route schemas. Response schemas drive serialisation (fast, and fixing the key order the
 * contract requires); request schemas document the parameters for OpenAPI. Requests are
 * checked by the domain, not by these schemas: see docs/adr/0003-validation-in-the-domain.md.
 */

export const LinkSchema = Type.Object(
  {
    ShortCode: Type.String({ description: 'The shortcode, without the base URL' }),
    PointsTo: Type.String({ description: 'The target URL, exactly as given' }),
    CreatedBy: Type.Integer({ description: 'Uid of the account that created the link' }),
    Accesses: Type.Integer({ description: 'Resolutions so far, this one included' }),
  },
  { $id: 'Link' },
);

export const AccountSchema = Type.Object(
  {
    Uid: Type.Integer({ description: 'Unique, increasing account number' }),
    AccessCode: Type.String({ description: 'The account\'s only credential (v4 UUID, lower case)' }),
    DateCreated: Type.String({ description: 'ISO 8601 creation time' }),
    MaxLinks: Type.Integer({ description: 'How many links the account may hold at once' }),
  },
  { $id: 'Account' },
);

export const PlainText = Type.String({ description: 'text/plain; charset=utf-8' });

export const ShortcodeParams = Type.Object({ code: Type.String() });

export const AuthQuery = Type.Object({
  auth: Type.Optional(Type.String({ description: 'Access code (or use the Authorization header)' })),
});

export const CreateLinkQuery = Type.Object({
  url: Type.Optional(Type.String({ maxLength: 2000, description: 'Absolute http(s) target URL' })),
  short: Type.Optional(Type.String({ minLength: 5, maxLength: 2000, description: 'Custom shortcode' })),
  auth: Type.Optional(Type.String({ description: 'Access code (or use the Authorization header)' })),
});

export const DeleteLinkQuery = Type.Object({
  short: Type.Optional(Type.String({ description: 'Shortcode of the link to delete' })),
  auth: Type.Optional(Type.String({ description: 'Access code (or use the Authorization header)' })),
});
