export { adaptiveTemplateLaunchRoutes, adaptiveTemplateRoutes } from './adaptive-templates.routes.ts';
