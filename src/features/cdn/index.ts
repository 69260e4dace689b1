export { cdnRoutes } from './cdn.routes.ts';
export { runEdge } from './edge/run.ts';
export { Edge, type EdgeDeps } from './edge/edge.ts';
