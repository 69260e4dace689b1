/**
 * Actions: the user-visible face of long-running jobs (GET /v1/action/{id}). A feature starts one
 * with createAction (in its transaction) and runs it with a job handler made by actionJobHandler.
 */
export {
  createAction,
  actionCreator,
  getAction,
  readAction,
  type ActionObjectReader,
  actionOut,
  actionJobHandler,
  listActions,
  cancelAction,
  resumeAction,
  ActionCancelled,
  type NewAction,
  type ActionContext,
  type ActionOutcome,
  type ActionStatus,
} from './actions.service.ts';
export { actionRoutes, ActionSchema, type ActionRouteHooks } from './actions.routes.ts';
