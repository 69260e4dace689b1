import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { clientIp, principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { sharedJsonSender } from '../../../core/http/shared-json.ts';
import {
  GroupMembershipSchema,
  IdParamsSchema,
  OwnPasswordChangeSchema,
  PasswordChangedSchema,
  PasswordResetSchema,
  StatusMessageSchema,
  UserCreateSchema,
  UserCreatedSchema,
  UserSchema,
  UserUpdateSchema,
} from '../identity.schemas.ts';
import { changeOwnPassword, resetPassword } from '../passwords/passwords.service.ts';
import { searchUsers, UserSearchParamsSchema, UserSearchQuerySchema, UserSearchResultSchema } from './user-search.ts';
import {
  cachedCurrentUser,
  changeGroupMembership,
  createUser,
  getCurrentUser,
  getUser,
  updateUser,
} from './users.service.ts';

const tags = ['people'];
const UserRef = Type.Ref('User');

export function userRoutes(app: App, deps: Deps): void {
  app.addSchema(UserSchema);
  // getCurrentUser hands out one cached object per user until an identity change: serialized once.
  const sendCurrentUser = sharedJsonSender();

  app.get(
    '/user',
    {
      config: { scope: 'identity' },
      schema: {
        operationId: 'GetCurrentUser',
        tags,
        summary: 'The current user',
        response: { 200: UserRef, ...errorResponses(...AUTHENTICATED_ERRORS, 'not_found') },
      },
    },
    (request, reply) => {
      const principal = principalOf(request);
      // A cached profile is answered synchronously (nothing returned: the reply is sent). Else the
      // promise settles when the answer is written (the reply is a thenable), so Fastify never sends
      // a second, empty answer while the first is on its way.
      const cached = cachedCurrentUser(deps, principal);
      if (cached === undefined)
        return getCurrentUser(deps, principal).then(async (user) => {
          await sendCurrentUser(reply, user);
        });
      sendCurrentUser(reply, cached);
      return undefined;
    },
  );

  app.post(
    '/user',
    {
      schema: {
        operationId: 'CreateUser',
        tags,
        summary: 'Create a user (User Management and Security Template Management)',
        body: UserCreateSchema,
        response: {
          200: UserCreatedSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'conflict'),
        },
      },
    },
    async (request) => {
      const created = await createUser(deps, principalOf(request), request.body, clientIp(request));
      return { status: 'success' as const, ...created };
    },
  );

  app.get(
    '/user/search/:searchText',
    {
      schema: {
        operationId: 'GetUserByText',
        tags,
        summary:
          'Search people by name, username, email, phone, company, contact, country, status, group or role (User Management)',
        params: UserSearchParamsSchema,
        querystring: UserSearchQuerySchema,
        response: {
          200: UserSearchResultSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden'),
        },
      },
    },
    async (request) => searchUsers(deps, principalOf(request), request.params.searchText, request.query),
  );

  app.get(
    '/user/:id',
    {
      schema: {
        operationId: 'GetUser',
        tags,
        summary: 'A user by id',
        params: IdParamsSchema,
        response: { 200: UserRef, ...errorResponses(...AUTHENTICATED_ERRORS, 'not_found') },
      },
    },
    async (request) => getUser(deps, principalOf(request), request.params.id),
  );

  app.patch(
    '/user/:id',
    {
      schema: {
        operationId: 'UpdateUser',
        tags,
        summary: 'Update a user (own profile, or anyone with User Management)',
        params: IdParamsSchema,
        body: UserUpdateSchema,
        response: {
          200: UserRef,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict'),
        },
      },
    },
    async (request) => updateUser(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );

  app.put(
    '/user/password',
    {
      schema: {
        operationId: 'ChangeOwnPassword',
        tags,
        summary: 'Change your own password (needs the current one; ends your other sessions)',
        body: OwnPasswordChangeSchema,
        response: {
          200: PasswordChangedSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict'),
        },
      },
    },
    async (request) => changeOwnPassword(deps, principalOf(request), request.body, clientIp(request)),
  );

  app.put(
    '/user/:id/password',
    {
      schema: {
        operationId: 'ResetUserPassword',
        tags,
        summary: "Set another user's password (User Management; ends all their sessions)",
        params: IdParamsSchema,
        body: PasswordResetSchema,
        response: {
          200: PasswordChangedSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict'),
        },
      },
    },
    async (request) => resetPassword(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );

  for (const change of ['add', 'remove'] as const) {
    app.patch(
      `/user/:id/${change}-to-group`.replace('remove-to', 'remove-from'),
      {
        schema: {
          operationId: change === 'add' ? 'AddUserToGroup' : 'DeleteGroupFromUser',
          tags,
          summary: change === 'add' ? 'Add a user to a group' : 'Remove a user from a group',
          params: IdParamsSchema,
          body: GroupMembershipSchema,
          response: {
            200: StatusMessageSchema,
            ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict'),
          },
        },
      },
      async (request) => {
        await changeGroupMembership(
          deps,
          principalOf(request),
          request.params.id,
          request.body,
          change,
          clientIp(request),
        );
        return { status: 'success' as const, message: 'User Profile update was successful' };
      },
    );
  }
}
