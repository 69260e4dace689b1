export { scimRoutes } from './scim.routes.ts';
