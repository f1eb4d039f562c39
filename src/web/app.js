// Shortlink's browser UI, the entry module the page loads. It talks to the public HTTP API
// only, like any other client (api.js). The other modules each hold one part of the page:
// account-view.js (getting in and out), links-view.js (making and managing links),
// stats-view.js (visit statistics of a link or of the account), lookup-view.js (looking up
// any shortcode), bookmarklet.js ("shorten this page" from any site),
// with dom.js, session.js and qr.js beneath them.
// The browser loads them as they are, as ES modules: there is no build step.
import { restoreSession, wireAccountView } from './account-view.js';
import { prefillFromAddress, wireBookmarklet } from './bookmarklet.js';
import { wireLinksView } from './links-view.js';
import { wireLookupView } from './lookup-view.js';
import { wireStatsView } from './stats-view.js';

async function start() {
  wireAccountView();
  wireLinksView();
  wireStatsView();
  wireLookupView();
  wireBookmarklet();
  // Before the session comes back: the form is there (hidden) either way, and keeps the value
  // through a sign-in.
  prefillFromAddress();
  await restoreSession();
}

void start();
