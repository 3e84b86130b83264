import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'agentvcr',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
