import type { TSchema } from 'typebox';
import { ScimErrorSchema } from './scim.schemas.ts';

export const tags = ['SCIM'];
export const MEDIA = ['application/scim+json', 'application/json'];

/** The SCIM error responses a route declares. */
export function scimErrors(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries([401, 403, 429, ...statuses].map((s) => [s, ScimErrorSchema]));
}
