import { Type, type Static } from 'typebox';
import { docRequiredOneOf } from '../../core/http/doc-schema.ts';

const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
const Name50 = Type.String({ minLength: 1, maxLength: 50 });

export const UserSchema = Type.Object(
  {
    userId: Uuid,
    customerId: Type.String(),
    userName: Type.Union([Type.String(), Type.Null()]),
    emailId: Type.String(),
    firstName: Type.String(),
    lastName: Type.String(),
    friendlyName: Type.String(),
    roleId: Uuid,
    status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled'), Type.Literal('pending')]),
    accountType: Type.String(),
    groups: Type.Array(Uuid),
    phone: Type.Union([Type.String(), Type.Null()]),
    contact: Type.Union([Type.String(), Type.Null()]),
    country: Type.Union([Type.String(), Type.Null()]),
    company: Type.Union([Type.String(), Type.Null()]),
    createdEpoch: Type.Integer(),
    lastUpdatedEpoch: Type.Integer(),
    createdDate: Type.String({ format: 'date-time' }),
    lastUpdatedDate: Type.String({ format: 'date-time' }),
  },
  { $id: 'User', title: 'User' },
);
export type User = Static<typeof UserSchema>;

const CustomAttributes = Type.Object({
  country: Type.Optional(Type.String({ maxLength: 100 })),
  company: Type.Optional(Type.String({ maxLength: 100 })),
  phone: Type.Optional(Type.Union([Type.String({ maxLength: 50 }), Type.Number()])),
  contact: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Number()])),
});

export const UserCreateSchema = Type.Object({
  firstName: Name50,
  lastName: Name50,
  friendlyName: Name50,
  email: Type.String({ format: 'email', minLength: 6, maxLength: 75 }),
  username: Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9._@+-]+$' }),
  password: Type.Optional(Type.String({ minLength: 8, maxLength: 150 })),
  accountType: Type.Union([Type.Literal('local'), Type.Literal('federated')]),
  userRoleId: Uuid,
  groups: Type.Array(Uuid, { minItems: 1, maxItems: 100, uniqueItems: true }),
  customAttributes: Type.Optional(CustomAttributes),
});
export type UserCreate = Static<typeof UserCreateSchema>;

export const UserCreatedSchema = Type.Object({
  status: Type.Literal('success'),
  roleId: Uuid,
  userId: Uuid,
});

export const UserUpdateSchema = Type.Object(
  {
    firstName: Type.Optional(Name50),
    lastName: Type.Optional(Name50),
    friendlyName: Type.Optional(Name50),
    email: Type.Optional(Type.String({ format: 'email', minLength: 6, maxLength: 75 })),
    company: Type.Optional(Type.String({ maxLength: 100 })),
    country: Type.Optional(Type.String({ maxLength: 100 })),
    contact: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Number()])),
    phone: Type.Optional(Type.Union([Type.String({ maxLength: 50 }), Type.Number()])),
    userRoleId: Type.Optional(Uuid),
    userRoleName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    groups: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: 100, uniqueItems: true })),
    status: Type.Optional(Type.Union([Type.Literal('enabled'), Type.Literal('disabled')])),
  },
  { minProperties: 1 },
);
export type UserUpdate = Static<typeof UserUpdateSchema>;

export const GroupMembershipSchema = Type.Object({
  userGroupId: Type.Optional(Uuid),
  userGroupName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});
docRequiredOneOf(GroupMembershipSchema, [['userGroupId'], ['userGroupName']]);
export type GroupMembership = Static<typeof GroupMembershipSchema>;

export const StatusMessageSchema = Type.Object({ status: Type.Literal('success'), message: Type.String() });

export const IdParamsSchema = Type.Object({ id: Uuid });

// Groups
export const GroupSchema = Type.Object(
  {
    groupId: Uuid,
    groupName: Type.String(),
    description: Type.String(),
    createdEpoch: Type.Integer(),
    lastUpdatedEpoch: Type.Integer(),
  },
  { $id: 'Group', title: 'Group' },
);
export type Group = Static<typeof GroupSchema>;
export const GroupCreateSchema = Type.Object({
  groupName: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
});
export const GroupUpdateSchema = Type.Object(
  {
    groupName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { minProperties: 1 },
);

// Roles and privileges
export const RoleSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    privileges: Type.Array(Type.String()),
    createdEpoch: Type.Integer(),
    lastUpdatedEpoch: Type.Integer(),
  },
  { $id: 'Role', title: 'Role' },
);
export type Role = Static<typeof RoleSchema>;
export const RoleCreateSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  privileges: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
    maxItems: 100,
    uniqueItems: true,
    description: 'Privilege keys or names',
  }),
});
export const RoleUpdateSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    privileges: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100, uniqueItems: true }),
    ),
  },
  { minProperties: 1 },
);
export const PrivilegeSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  enabled: Type.Boolean(),
});
export const PrivilegesResponseSchema = Type.Object({ privileges: Type.Array(PrivilegeSchema) });
export const PrivilegesQuerySchema = Type.Object({
  filter: Type.Optional(Type.Union([Type.Literal('enabled'), Type.Literal('disabled')])),
});

// Security templates and permissions
export const PermissionSchema = Type.Object({ permissionId: Uuid, id: Type.String(), name: Type.String() });
export const PermissionsResponseSchema = Type.Object({ permissions: Type.Array(PermissionSchema) });

const GroupPermissions = Type.Object({
  groupId: Uuid,
  groupPermissions: Type.Array(Type.Object({ permissionId: Uuid, isPermitted: Type.Boolean() }), { maxItems: 50 }),
});
const DenormalizedGrant = Type.Object({ groupId: Uuid, permissions: Type.Array(Uuid, { maxItems: 50 }) });

export const SecurityTemplateSchema = Type.Object(
  {
    templateId: Uuid,
    templateName: Type.String(),
    description: Type.String(),
    securityDenormalized: Type.Array(DenormalizedGrant),
    templateDocument: Type.Array(GroupPermissions),
    createdEpoch: Type.Integer(),
    lastUpdatedEpoch: Type.Integer(),
  },
  { $id: 'SecurityTemplate', title: 'SecurityTemplate' },
);
export type SecurityTemplate = Static<typeof SecurityTemplateSchema>;
export const SecurityTemplateWriteSchema = Type.Object({
  templateName: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  templateDocument: Type.Optional(Type.Array(GroupPermissions, { maxItems: 500 })),
  securityDenormalized: Type.Optional(Type.Array(DenormalizedGrant, { maxItems: 500 })),
});
export type SecurityTemplateWrite = Static<typeof SecurityTemplateWriteSchema>;
export const SecurityTemplateUpdateSchema = Type.Object(
  {
    templateName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    templateDocument: Type.Optional(Type.Array(GroupPermissions, { maxItems: 500 })),
    securityDenormalized: Type.Optional(Type.Array(DenormalizedGrant, { maxItems: 500 })),
  },
  { minProperties: 1 },
);
export type SecurityTemplateUpdate = Static<typeof SecurityTemplateUpdateSchema>;

// Passwords (issue 8: own change with the current password; administrator reset)
export const OwnPasswordChangeSchema = Type.Object(
  {
    currentPassword: Type.String({ minLength: 1, maxLength: 1024 }),
    newPassword: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: '8–1024 characters, not a common password, not the username',
    }),
  },
  { additionalProperties: false },
);
export const PasswordResetSchema = Type.Object(
  {
    newPassword: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: '8–1024 characters, not a common password, not the username',
    }),
  },
  { additionalProperties: false },
);
export const PasswordChangedSchema = Type.Object({
  status: Type.Literal('success'),
  message: Type.String(),
  revokedSessions: Type.Integer({ description: 'Sessions of the user that were ended' }),
});

export const InvitationSchema = Type.Object({
  url: Type.String({ description: 'The one-time link to /app/set-password, shown only in this answer' }),
  token: Type.String({ description: 'The one-time token in the link (only its SHA-256 is stored)' }),
  expiresAt: Type.String({ format: 'date-time', description: 'When the link stops working (7 days)' }),
  expiresEpoch: Type.Number({ description: 'The same, in milliseconds since the epoch' }),
});

export const InvitationAcceptSchema = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'The token from the invitation link' }),
  password: Type.String({ minLength: 1, maxLength: 150, description: 'The new password (the password rules apply)' }),
});

export const InvitationAcceptedSchema = Type.Object({
  status: Type.Literal('success'),
  message: Type.String(),
  username: Type.String({ description: 'The username to sign in with' }),
});
