// Route schemas compiled on first use instead of at start (lean start). Fastify compiles an Ajv
// validator for every request part and a fast-json-stringify serializer for every response status
// of every route (and again for the HEAD twin of every GET) while the server boots: several hundred
// generated functions, most of which a given deployment never calls, ~15 MiB of heap. Here the
// default compilers are wrapped so that each one is compiled the first time its route needs it; from
// then on the compiled function is called directly (one extra property read per call).
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

type ValidatorFn = ((data: unknown) => unknown) & { errors?: unknown };
type SerializerFn = (data: unknown) => string;
interface RouteSchema {
  schema: Record<string, unknown>;
  httpPart?: string;
  [key: string]: unknown;
}
type ValidatorBuilder = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => ValidatorFn;
type SerializerBuilder = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => SerializerFn;

// Fastify's own default compilers, resolved from Fastify's location (they are its dependencies).
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'));
const defaultValidatorBuilder = (): ValidatorBuilder =>
  (fastifyRequire('@fastify/ajv-compiler') as () => ValidatorBuilder)();
const defaultSerializerBuilder = (): SerializerBuilder =>
  (fastifyRequire('@fastify/fast-json-stringify-compiler') as () => SerializerBuilder)();

/**
 * Header names arrive lower-cased; Fastify lower-cases a header schema's property names itself only
 * when it uses its default compiler, so the wrapper does it (top level: that is all our schemas use).
 */
function lowerCaseHeaders(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = schema.properties as Record<string, unknown> | undefined;
  const required = schema.required as string[] | undefined;
  return {
    ...schema,
    ...(properties
      ? { properties: Object.fromEntries(Object.entries(properties).map(([k, v]) => [k.toLowerCase(), v])) }
      : {}),
    ...(required ? { required: required.map((k) => k.toLowerCase()) } : {}),
  };
}

export interface LazySchemas {
  /** Fastify's `schemaController` option. */
  readonly schemaController: NonNullable<FastifyServerOptions['schemaController']>;
  /** Compiles every schema not compiled yet (tests: a schema error must not wait for the first request). Returns how many. */
  compileAll(): number;
}

export function lazySchemas(): LazySchemas {
  const pending = new Set<() => void>();
  const lazy = <F extends (data: unknown) => unknown>(
    compile: () => F,
    call: (fn: F, data: unknown, self: ValidatorFn) => unknown,
  ) => {
    let fn: F | undefined;
    const force = () => {
      pending.delete(force);
      fn ??= compile();
      return fn;
    };
    pending.add(force);
    const wrapper: ValidatorFn = (data: unknown) => call(fn ?? force(), data, wrapper);
    return wrapper;
  };
  // One pool of each per app, as Fastify has by default (contexts with the same shared schemas share an Ajv).
  let validators: ValidatorBuilder | undefined;
  let serializers: SerializerBuilder | undefined;
  const compilersFactory: { buildValidator: ValidatorBuilder; buildSerializer: SerializerBuilder } = {
    // The Ajv instance (with every shared schema added) is made by the first compilation, too.
    buildValidator(externalSchemas, options) {
      let compiler: ReturnType<ValidatorBuilder> | undefined;
      const build = (route: RouteSchema) =>
        (compiler ??= (validators ??= defaultValidatorBuilder())(externalSchemas, options))(route);
      return (route) => {
        const input = route.httpPart === 'headers' ? { ...route, schema: lowerCaseHeaders(route.schema) } : route;
        // Fastify reads `.errors` off the function it called, as Ajv leaves them on the validator.
        return lazy(
          () => build(input),
          (fn, data, self) => {
            const ok = fn(data);
            self.errors = fn.errors;
            return ok;
          },
        );
      };
    },
    buildSerializer(externalSchemas, options) {
      let compiler: ReturnType<SerializerBuilder> | undefined;
      const build = (route: RouteSchema) =>
        (compiler ??= (serializers ??= defaultSerializerBuilder())(externalSchemas, options))(route);
      return (route) =>
        lazy(
          () => build(route),
          (fn, data) => fn(data),
        ) as SerializerFn;
    },
  };
  return {
    schemaController: { compilersFactory } as unknown as LazySchemas['schemaController'],
    compileAll() {
      const all = [...pending];
      for (const force of all) force();
      return all.length;
    },
  };
}
