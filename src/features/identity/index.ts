import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { accessRoutes } from './access/access.routes.ts';
import { invitationRoutes } from './invitations/invitations.routes.ts';
import { userRoutes } from './users/users.routes.ts';

export { bootstrapFirstOrganization } from './organizations/bootstrap.ts';
export {
  createOrganization,
  type CreatedOrganization,
  type OrganizationSeed,
} from './organizations/organizations.service.ts';
export { loadUserPrincipal, parsePrivileges, principalFromRow, type UserPrincipalRow } from './principal.ts';
export { groupIdsJson } from './identity.repo.ts';
export { hashPassword, verifyPassword, dummyPasswordHash, passwordQueueDepth } from './passwords/password.ts';
export { COMMON_PASSWORD_COUNT, isCommonPassword, passwordProblem } from './passwords/password-policy.ts';
export { findUser, findUserByUsername, findRole, findRoleByName } from './identity.repo.ts';
export {
  createLocalUser,
  createFederatedUser,
  existingGroupIds,
  groupNamesOfUser,
  ssoUserState,
  syncManagedGroups,
  usernameTaken,
  createServiceAccount,
  customerIdColumn,
  customerIdOf,
  customerIdsOf,
  disableUser,
  enabledUserIdByEmail,
  enabledUsernameOf,
  enabledUserPrivilegesOf,
  defaultSecurityTemplateId,
  findTokenSubject,
  groupNames,
  organizationIds,
  organizationNameTaken,
  organizationsByIdOrName,
  rolePrivilegesOf,
  setPasswordHash,
  securityTemplateNames,
  userNames,
  type UserNames,
} from './directory.ts';
export {
  changeGroupMembers,
  createProvisionedGroup,
  createProvisionedUser,
  deleteProvisionedGroup,
  provisionedGroup,
  provisionedGroups,
  provisionedUser,
  provisionedUsers,
  renameProvisionedGroup,
  updateProvisionedUser,
  type ExcludedIds,
  type ProvisionedGroup,
  type ProvisionedUser,
  type ProvisionedUserInput,
} from './provisioning.ts';
export { UserCreateSchema } from './identity.schemas.ts';
export { managedUser } from './users/users.service.ts';
export { checkSecurityTemplateIds, type SecurityTemplateIdRules } from './access/security-template-ids.ts';
export type { BootstrapResult } from './organizations/bootstrap.ts';
export { createIdentityRuntime, type IdentityRuntime } from './runtime.ts';

export function identityRoutes(app: App, deps: Deps): void {
  userRoutes(app, deps);
  invitationRoutes(app, deps);
  accessRoutes(app, deps);
}
