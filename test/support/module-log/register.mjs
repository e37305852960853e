// `node --import <this file>`: every module the process loads is appended, one URL
// per line, to the file STOOP_MODULE_LOG names (./hooks.mjs). Used to check what a
// command's start-up loads.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url, { data: { file: process.env.STOOP_MODULE_LOG } });
