// Shortlink's browser UI, the entry module the page loads. It talks to the public HTTP API
// only, like any other client (api.js). The page is four views, each with its own address
// (router.js): Links (link-create.js with link-paste.js, links-list.js, link-edit.js,
// link-delete.js, with links-state.js beneath them and links-live.js for live updates),
// Statistics (stats-view.js, drawing with stats-chart.js and stats-map.js), Integrations
// (integrations-view.js with keys-panel.js) and Account (account-view.js, bookmarklet.js);
// lookup-view.js looks up any shortcode, signed in or not. dom.js, session.js, messages.js,
// qr.js and sparkline.js serve them all.
// The browser loads them as they are, as ES modules: there is no build step.
import { restoreSession, wireAccountView } from './account-view.js';
import { prefillFromAddress, wireBookmarklet } from './bookmarklet.js';
import { wireIntegrationsView } from './integrations-view.js';
import { wireCreateForm } from './link-create.js';
import { wireDeleteDialog } from './link-delete.js';
import { wireEditDialog } from './link-edit.js';
import { wireLinksList } from './links-list.js';
import { wireLookupView } from './lookup-view.js';
import { wireQrDialog } from './qr.js';
import { onView, wireRouter } from './router.js';
import { openStats, wireStatsView } from './stats-view.js';

async function start() {
  wireRouter();
  wireAccountView();
  wireCreateForm();
  wireLinksList();
  wireEditDialog();
  wireDeleteDialog();
  wireStatsView();
  wireIntegrationsView();
  wireLookupView();
  wireBookmarklet();
  wireQrDialog();
  onView('stats', (route) => void openStats(route.param));
  // Before the session comes back: the form is there (hidden) either way, and keeps the value
  // through a sign-in.
  prefillFromAddress();
  await restoreSession();
}

void start();
