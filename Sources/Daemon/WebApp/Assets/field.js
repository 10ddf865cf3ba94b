// What a night in the field needs of the phone itself: the screen kept on while something runs,
// the page kept for when the daemon is out of reach, a notice when a run ends, and the phone's
// position for the pictures. Each is the browser's to grant, most only over HTTPS: where one is
// not granted, the page says why.
import { api, camerasPath } from "./api.js";
import { isLive, jobOnTarget, kindOf, runningJobs, targetCameras } from "./model.js";

/** Whether the screen should stay on: a run, a bulb, or a recording of the target under way. */
export function wakeWanted(state) {
  return runningJobs(state).length > 0 || !!state.directBulb || !!(state.target && state.recordings[state.target]);
}

/** Metres between two fixes (haversine on a sphere of the Earth's mean radius). */
export function metresBetween(a, b) {
  const radians = (degrees) => (degrees * Math.PI) / 180;
  const dLat = radians(b.latitude - a.latitude);
  const dLon = radians(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(radians(a.latitude)) * Math.cos(radians(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Whether a new fix is worth sending to the cameras: the first, one 25 m away, or every 5 minutes. */
export function positionWorthSending(last, next) {
  if (!last) return true;
  return metresBetween(last, next) >= 25 || next.fixUnixMilliseconds - last.fixUnixMilliseconds >= 300000;
}

/** A job that ended, in the words of a notification: its title and what it did. */
export function endNotice(job) {
  const s = job.summary || {};
  const what = kindOf(job) === "video" ? "Clips" : kindOf(job) === "photo-bulb" ? "Bulb" : "Time-lapse";
  const failed = job.state === "failed" || (s.failed || 0) > 0;
  return {
    title: `${what} ${job.id} ${failed ? "ended with failures" : job.state}`,
    body: `${job.reason || job.state}. ${s.taken || 0} taken, ${s.failed || 0} failed, ${s.skipped || 0} skipped.`,
  };
}

const secureWhy = "it needs the page over HTTPS ([web] certificate in the daemon's configuration, docs/web-app.md)";

export class Field {
  constructor(store) {
    this.store = store;
    this.lock = null;
    this.acquiring = false;
    this.watch = null;
    this.lastSent = null;
    /** Jobs live at the last look, to tell which ended. */
    this.live = new Set();
    store.update((state) => {
      state.field = {
        wake: "idle",
        wakeWhy: "",
        notify: typeof Notification === "undefined" ? "unsupported" : !isSecureContext ? "insecure" : Notification.permission,
        geotag: "off",
        geotagWhy: "",
        offline: false,
      };
    });
    document.addEventListener("visibilitychange", () => this.follow(store.state));
  }

  /** Registers the service worker that keeps the shell (HTTPS, or this machine's own address). */
  static keepShell() {
    if (!("serviceWorker" in navigator) || !isSecureContext) return;
    const hadOne = !!navigator.serviceWorker.controller;
    // A new daemon's page, taken over by its worker, replaces the page the old worker kept: the
    // daemon holds every run, so a reload loses nothing.
    navigator.serviceWorker.addEventListener("controllerchange", () => { if (hadOne) location.reload(); });
    navigator.serviceWorker.register("/sw.js").catch(() => { /* the page works without it */ });
  }

  /** Asks whether the daemon serves a newer page than the one kept (a page opened offline). */
  static checkShell() {
    if (!("serviceWorker" in navigator) || !isSecureContext) return;
    navigator.serviceWorker.getRegistration().then((registration) => registration && registration.update()).catch(() => {});
  }

  /** Called after every change: takes or lets go of the screen, and tells of runs that ended. */
  follow(state) {
    if (!state.field) return;
    this.followWake(state);
    this.followEnds(state);
  }

  followWake(state) {
    const wanted = wakeWanted(state) && document.visibilityState === "visible";
    if (!wanted) {
      if (this.lock) { const lock = this.lock; this.lock = null; lock.release().catch(() => {}); }
      if (state.field.wake !== "idle" && !wakeWanted(state)) this.set({ wake: "idle", wakeWhy: "" });
      return;
    }
    if (this.lock || this.acquiring) return;
    if (!isSecureContext) { this.set({ wake: "unavailable", wakeWhy: `The screen may sleep: keeping it on ${secureWhy}.` }); return; }
    if (!("wakeLock" in navigator)) { this.set({ wake: "unavailable", wakeWhy: "The screen may sleep: this browser cannot keep it on." }); return; }
    this.acquiring = true;
    navigator.wakeLock.request("screen").then((lock) => {
      this.acquiring = false;
      this.lock = lock;
      // The browser lets go when the page is hidden; it is taken again when it comes back.
      lock.addEventListener("release", () => { if (this.lock === lock) this.lock = null; this.store.update(); });
      this.set({ wake: "held", wakeWhy: "The screen stays on while this runs." });
      if (!wakeWanted(this.store.state)) this.followWake(this.store.state);
    }, (error) => {
      this.acquiring = false;
      this.set({ wake: "unavailable", wakeWhy: `The screen may sleep: the browser refused to keep it on (${error.message}).` });
    });
  }

  /** Time-lapses and clips on the page's target that ended since the last look (a Photo bulb
   *  ends under the finger that started it: not news). */
  followEnds(state) {
    const now = new Set(runningJobs(state).filter((job) => kindOf(job) !== "photo-bulb" && jobOnTarget(state, job)).map((job) => job.id));
    for (const id of this.live) {
      const job = state.jobs.get(id);
      if (!now.has(id) && job && !isLive(job)) this.tell(job);
    }
    this.live = now;
  }

  /** A run that ended: a banner in the page, and a notification when the page is out of sight. */
  tell(job) {
    const notice = endNotice(job);
    this.store.update((state) => { state.messages.notice = { text: `${notice.title}: ${notice.body}`, kind: job.state === "failed" ? "error" : "ok" }; });
    if (document.visibilityState === "visible" || this.store.state.field.notify !== "granted") return;
    const options = { body: notice.body, tag: `job-${job.id}`, icon: "/icon-192.png" };
    navigator.serviceWorker.ready.then((registration) => registration.showNotification(notice.title, options))
      .catch(() => { try { new Notification(notice.title, options); } catch { /* the banner tells it */ } });
  }

  /** Asks the browser for notifications; it must follow a press. */
  async askToNotify() {
    if (typeof Notification === "undefined") return;
    if (!isSecureContext) { this.set({ notify: "insecure" }); return; }
    this.set({ notify: await Notification.requestPermission() });
  }

  /** Follows the phone's position and gives it to the target's cameras as their geotag. */
  geotag(on) {
    if (!on) {
      if (this.watch !== null) navigator.geolocation.clearWatch(this.watch);
      this.watch = null;
      this.set({ geotag: "off", geotagWhy: "" });
      return;
    }
    if (!isSecureContext || !("geolocation" in navigator)) {
      this.set({ geotag: "unavailable", geotagWhy: isSecureContext ? "This browser has no position to give." : `The phone's position ${secureWhy}.` });
      return;
    }
    this.set({ geotag: "waiting", geotagWhy: "Waiting for the phone's position…" });
    this.watch = navigator.geolocation.watchPosition((position) => this.sendPosition(position),
      (error) => this.set({ geotag: "unavailable", geotagWhy: `No position: ${error.message}.` }), { enableHighAccuracy: true, maximumAge: 30000 });
  }

  async sendPosition(position) {
    const fix = {
      latitude: position.coords.latitude, longitude: position.coords.longitude,
      altitudeMetres: position.coords.altitude ?? null, fixUnixMilliseconds: Math.round(position.timestamp),
    };
    if (!positionWorthSending(this.lastSent, fix)) return;
    this.lastSent = fix;
    const names = targetCameras(this.store.state);
    const results = await Promise.allSettled(names.map((name) => api("PUT", camerasPath(name, "/geotag"), fix)));
    const refused = results.find((result) => result.status === "rejected");
    const where = `${fix.latitude.toFixed(5)}, ${fix.longitude.toFixed(5)}`;
    this.set(refused ? { geotag: "refused", geotagWhy: `The camera did not take the position: ${refused.reason.message}` }
      : { geotag: "on", geotagWhy: `Pictures are geotagged with this phone's position (${where}).` });
  }

  /** Changes what the page shows of these; a change that changes nothing draws nothing, or
   *  drawing (which asks `follow` again) would never end. */
  set(changes) {
    const current = this.store.state.field;
    if (Object.entries(changes).every(([key, value]) => current[key] === value)) return;
    this.store.update((state) => Object.assign(state.field, changes));
  }
}
