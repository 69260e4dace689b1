import type { FastifyReply } from 'fastify';

/**
 * For a route whose answer is an object a cache hands to every request (shared, never mutated):
 * the route's response schema serializes each such object once, and later replies send the same
 * JSON text. On a hot read path that saves the serializer and the garbage it makes on every call.
 * One sender per route: the text is that route's serialization (its schema, status 200).
 */
export function sharedJsonSender(): <R extends FastifyReply>(reply: R, value: object) => R {
  const texts = new WeakMap<object, string>();
  return (reply, value) => {
    let text = texts.get(value);
    if (text === undefined) {
      text = reply.serialize(value) as string;
      texts.set(value, text);
    }
    return sendJsonText(reply, text);
  };
}

/**
 * Sends JSON text the route's own serializer already made (`reply.serialize`): a string goes out
 * as is, with the content type Fastify sets for a serialized object. Returns the reply, for the
 * handler to return: Fastify then waits for the answer to be written instead of sending again.
 */
export function sendJsonText<R extends FastifyReply>(reply: R, text: string): R {
  reply.type('application/json; charset=utf-8').send(text);
  return reply;
}
