// Package pages serves the pages a person reads: a landing page, the
// niche catalogue (list, search, preview, the full evaluation for
// subscribers), subscriber sign-in, a captured page with its quote marked,
// and a verification with its receipt checked. It is an optional mount
// (route.Mount), like discovery.Documents: a host that lists no Pages
// serves no HTML of this package, and one that does can restyle it
// (Options.Stylesheet) or replace any template (Options.Templates).
//
// Every page is rendered on the server from html/template templates
// embedded in the binary, and works without JavaScript; the one script
// checks a receipt's Ed25519 signature with WebCrypto against the
// published keys. Pages build on the application layer only: the
// catalogue through sell.Niche (the same search word forms and free
// quota as the API), verifications through sell.App.Verification (the
// order token), prices from the sell.Catalogue, subscriptions and
// sessions through niche.SubscriptionService.
//
// Choices where the issue left them open:
//
//   - Paths. The catalogue pages have paths of their own under the niche
//     prefix ({niche}/browse, {niche}/browse/search, {niche}/browse/{id},
//     {niche}/account…) rather than negotiating on the API routes, whose
//     answers (JSON shapes, 401 challenges) stay exactly as agents know
//     them. Two pages do share an API route, chosen by Accept (a browser
//     ranks text/html above application/json; route.Route.Page): GET / (the
//     landing page beside the JSON index) and GET
//     {claims}/v1/claims/verifications/{id} (the verification page).
//     Captured pages are at /captures/{snapshot_id}; the stylesheet and
//     the receipt script at /assets/….
//   - Paging. The list shows 20 evaluations a page, up to the first 100
//     of the sort order (the catalogue engine's own bound on one list);
//     narrower views come from the category filter and search.
//   - The order token of a verification comes from a form (POST to the
//     page's own URL) or, for links, from the order_token query parameter;
//     pages are sent with Referrer-Policy: no-referrer and no-store.
//   - CSRF. Every POST goes through net/http's CrossOriginProtection
//     (Sec-Fetch-Site, else Origin compared with Host) and the session
//     cookie is SameSite=Lax; behind a proxy that rewrites Host, list the
//     public origin in Options.TrustedOrigins.
//   - The session cookie and its store are internal/websession and
//     niche.SubscriberSessions; the API keeps taking the bearer token
//     unchanged.
//   - Errors are pages for a browser: on these routes, and for a path
//     nothing serves (route.Route.NotFound); agents keep the server's
//     JSON answers, and so does a wrong method on an API route.
package pages
