import type { FastifyInstance } from 'fastify';

/** A route as registered: one method and its URL pattern. */
export interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route the app serves, one entry per method, in registration order. */
    readonly registeredRoutes: readonly RegisteredRoute[];
  }
}

/** Records routes as they are registered (metrics and the OpenAPI tests list them). */
export function trackRegisteredRoutes(app: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
}
