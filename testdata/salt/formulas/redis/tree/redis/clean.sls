include:
  - redis.server.clean
