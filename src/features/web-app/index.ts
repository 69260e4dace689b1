export { webAppRoutes, webAppCsp, WEB_APP_DIST } from './web-app.routes.ts';
