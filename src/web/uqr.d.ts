// At run time `./uqr.js` is the `uqr` package's ES module, served beside the UI's modules by
// assets.ts; this tells tsc so, with the package's own types.
export * from 'uqr';
