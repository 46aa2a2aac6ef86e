// Public entry of the Redis store.
export { createRedisStore, type RedisStoreOptions } from "./redis-store.js";
