import { Type, type TSchema } from 'typebox';
import { ScimErrorSchema } from '../scim.schemas.ts';

export const tags = ['SCIM'];
export const MEDIA = ['application/scim+json', 'application/json'];

/**
 * A 400 on a route with a path parameter can also come from the router itself, before the route runs (a
 * malformed percent-escape in the path): that one is Tessera's Error body, so such a 400 is either.
 */
const BAD_REQUEST = Type.Union([ScimErrorSchema, Type.Ref('Error')], {
  description: "SCIM's error; or, for a malformed URL refused by the router before the route runs, Tessera's Error",
});

/** The SCIM error responses a route declares (`routerErrors`: the route has a path parameter). */
export function scimErrors(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries([401, 403, 429, ...statuses].map((s) => [s, ScimErrorSchema]));
}

/** scimErrors for a route with a path parameter: its 400 may be the router's. */
export function scimErrorsWithPath(...statuses: number[]): Record<number, TSchema> {
  return { ...scimErrors(...statuses), 400: BAD_REQUEST };
}
