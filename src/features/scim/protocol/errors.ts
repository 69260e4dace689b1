import { AppError, type ErrorCode } from '../../../core/http/errors.ts';

export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** RFC 7644 §3.12 scimType values Tessera answers with. */
export type ScimType =
  | 'invalidFilter'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'invalidValue'
  | 'uniqueness'
  | 'mutability'
  | 'noTarget'
  | 'tooMany';

/** An error with a SCIM detail type; still an AppError, so logging and status handling are the usual ones. */
export class ScimError extends AppError {
  readonly scimType: ScimType;
  constructor(code: ErrorCode, scimType: ScimType, detail: string) {
    super(code, detail);
    this.scimType = scimType;
  }
}

export const invalidFilter = (detail: string) => new ScimError('bad_request', 'invalidFilter', detail);
export const invalidValue = (detail: string) => new ScimError('validation_failed', 'invalidValue', detail);
export const invalidSyntax = (detail: string) => new ScimError('bad_request', 'invalidSyntax', detail);
export const invalidPath = (detail: string) => new ScimError('bad_request', 'invalidPath', detail);
export const noTarget = (detail: string) => new ScimError('bad_request', 'noTarget', detail);
export const uniqueness = (detail: string) => new ScimError('conflict', 'uniqueness', detail);
export const mutability = (detail: string) => new ScimError('bad_request', 'mutability', detail);
