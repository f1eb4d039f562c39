/**
 * The one HTML answer: a GET in the short-URL space (`/{anything}`) that is no live link.
 * People land there from a browser, so they get a page rather than a bare error line.
 */
export const NOT_FOUND_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link not found · Shortlink</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;color:#1a1a1a;background:#fafafa}
main{max-width:32rem;padding:2rem;text-align:center}
h1{font-size:1.5rem;margin:0 0 .5rem}
a{color:#0645ad}
@media (prefers-color-scheme:dark){body{color:#eee;background:#16181c}a{color:#8ab4f8}}
</style>
</head>
<body>
<main>
<h1>This short link does not exist</h1>
<p>It may have been mistyped, or deleted by its owner.</p>
<p><a href="/">Go to Shortlink</a></p>
</main>
</body>
</html>
`;
