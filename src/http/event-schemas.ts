/**
 * The events of CONTRACT §7.5 as the live stream (`GET /v1/events`, the `data:` line) and
 * webhook deliveries carry them: `{type, timestamp, data}`, one schema per event type.
 */
import { Type, type Static, type TSchema } from 'typebox';
import { EventType } from '../events/events.ts';
import { LinkDetailsSchema } from './schemas.ts';

export const VisitEventItemSchema = Type.Object(
  {
    ShortCode: Type.String({ description: 'The link visited' }),
    Time: Type.String({ description: 'When the visit was counted (RFC 3339, UTC)' }),
    Bot: Type.Boolean({ description: 'Judged a bot by its User-Agent' }),
    Referrer: Type.String({ description: 'Referrer host, (direct) without a Referer; empty with STATS=off' }),
    Country: Type.String({ description: 'ISO 3166 alpha-2, ZZ unknown; empty with STATS=off' }),
    Browser: Type.String({ description: 'Browser class; empty with STATS=off' }),
    OperatingSystem: Type.String({ description: 'Operating system class; empty with STATS=off' }),
    Device: Type.String({ description: 'desktop, mobile, tablet, bot or other; empty with STATS=off' }),
  },
  { $id: 'VisitEventItem', description: 'One counted visit, reduced to its classes (never an address or a User-Agent)' },
);

/**
 * LinkDetails once per event schema, without its $id: three schemas naming the same $id in
 * one response would be ambiguous to the serialiser.
 */
const linkDetails = () => {
  const { $id: _id, ...schema } = LinkDetailsSchema as typeof LinkDetailsSchema & { $id?: string };
  return Type.Unsafe<Static<typeof LinkDetailsSchema>>({ ...schema, description: 'The link\'s LinkDetails' });
};

const envelope = <T extends EventType, D extends TSchema>(type: T, id: string, data: D, description: string) =>
  Type.Object(
    {
      type: Type.Literal(type),
      timestamp: Type.String({ description: 'When the change was committed (RFC 3339, UTC)' }),
      data,
    },
    { $id: id, description },
  );

export const LinkCreatedEventSchema = envelope(EventType.LinkCreated, 'LinkCreatedEvent', linkDetails(), 'A link was created; data is its LinkDetails');
export const LinkUpdatedEventSchema = envelope(EventType.LinkUpdated, 'LinkUpdatedEvent', linkDetails(), 'A link was edited (PATCH /v1/link); data is its LinkDetails after the edit');
export const LinkDeletedEventSchema = envelope(EventType.LinkDeleted, 'LinkDeletedEvent', linkDetails(), 'A link was deleted; data is its LinkDetails as it last stood');
export const LinkVisitedEventSchema = envelope(
  EventType.LinkVisited,
  'LinkVisitedEvent',
  Type.Object({ visits: Type.Array(VisitEventItemSchema, { description: 'The visits, in the order they were counted' }) }),
  'Links of the account were visited: the visits of one count batch (at most 100 per event on the live stream)',
);
export const AccountRotatedEventSchema = envelope(
  EventType.AccountRotated,
  'AccountRotatedEvent',
  Type.Object({ Uid: Type.Integer({ description: 'The account whose access code changed' }) }),
  'The account\'s access code was rotated (the new code is never in an event)',
);

export const EventSchema = Type.Union(
  [LinkCreatedEventSchema, LinkUpdatedEventSchema, LinkDeletedEventSchema, LinkVisitedEventSchema, AccountRotatedEventSchema],
  { $id: 'ShortlinkEvent', description: 'An event: the JSON of an SSE data line, or a webhook delivery\'s body' },
);

/** An event on the wire, as a stream reader or a webhook receiver gets it. */
export type EventBody = Static<typeof EventSchema>;
