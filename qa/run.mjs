#!/usr/bin/env node
// Entry point of `pnpm qa`: loads the TypeScript harness through tsx and runs it.
import { register } from 'tsx/esm/api';

register();
await import('./main.mts');
