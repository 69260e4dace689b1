import type { FastifyReply } from 'fastify';

/**
 * For a route whose answer is an object a cache hands to every request (shared, never mutated):
 * the route's response schema serializes each such object once, and later replies send the same
 * JSON text. On a hot read path that saves the serializer and the garbage it makes on every call.
 * One sender per route: the text is that route's serialization (its schema, status 200).
 */
export function sharedJsonSender(): (reply: FastifyReply, value: object) => FastifyReply {
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
 * as is, with the content type Fastify sets for a serialized object.
 */
export function sendJsonText(reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(text);
}
