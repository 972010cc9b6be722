/**
 * Entry point of the console bundle (built by scripts/build-console.mjs).
 * @module
 */
import { render } from 'preact';
import { App } from './app.js';

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
