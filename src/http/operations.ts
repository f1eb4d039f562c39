/** The operation names used in `Unable to <operation>: …` error bodies. */
export const Operation = {
  ResolveLink: 'resolve link',
  CreateAccount: 'create account',
  ListLinks: 'list links',
  CreateLink: 'create link',
  CreateLinks: 'create links',
  ManageKeys: 'manage keys',
  DeleteLink: 'delete link',
  UpdateLink: 'update link',
  GetAccount: 'get account information',
  GetStatistics: 'get statistics',
  RotateAccessCode: 'rotate access code',
  DeleteAccount: 'delete account',
  Administer: 'administer',
  /** Every domain route, the administrator's and the owner's (CONTRACT §8). */
  ManageDomains: 'manage domains',
  /** Every `/v1/webhooks…` call (CONTRACT §2 names one operation for all of them). */
  ManageWebhooks: 'manage webhooks',
  Other: 'handle request',
} as const;

export type Operation = (typeof Operation)[keyof typeof Operation];
