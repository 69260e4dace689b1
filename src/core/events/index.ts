export {
  EVENT_CATALOG,
  EVENT_TYPES,
  OPERATIONAL_EVENT_TYPES,
  CATALOG_DATE,
  EventMetaSchema,
  envelopeSchema,
  isEventType,
  type EventData,
  type EventType,
} from './catalog.ts';
export { eventDataSince } from './read.ts';
export { publishEvent, publishEvents, eventsPublished, type EventActor, type EventInput } from './publish.ts';
