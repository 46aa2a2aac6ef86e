// Public entry of the Redis store.
export { createRedisStore, type RedisStore, type RedisStoreOptions } from "./redis-store.js";
export { createRedisWebhookStore, type RedisWebhookStoreOptions } from "./webhook-ops.js";
