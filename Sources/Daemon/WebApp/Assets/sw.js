// The service worker: keeps the page's own files (the shell) so that the page opens when the
// daemon is out of reach (a Pi whose hotspot dropped) and says so, trying again, instead of the
// browser's error page. The daemon writes SHELL_FILES and SHELL_VERSION above this line from the
// files it serves, so the list is its own and a new daemon's page replaces the old one.
/* global SHELL_FILES, SHELL_VERSION */

const CACHE = `unleashed-shell-${SHELL_VERSION}`;

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL_FILES)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((name) => name.startsWith("unleashed-shell-") && name !== CACHE).map((name) => caches.delete(name))))
    .then(() => self.clients.claim()));
});

// The shell from the network while the daemon answers (it revalidates cheaply), from the cache
// when it does not. The API is never cached: what the daemon says is only ever live.
self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin || !SHELL_FILES.includes(url.pathname)) return;
  event.respondWith(fetch(event.request).then((response) => {
    if (response.ok) {
      const copy = response.clone();
      event.waitUntil(caches.open(CACHE).then((cache) => cache.put(url.pathname, copy)));
    }
    return response;
  }).catch(() => caches.open(CACHE).then((cache) => cache.match(url.pathname)).then((cached) => cached || Response.error())));
});

// A notification tapped: the page comes to the front (or opens).
self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(self.clients.matchAll({ type: "window" }).then((windows) => (windows.length ? windows[0].focus() : self.clients.openWindow("/"))));
});
