// The one store: the state, the only way to change it, and one render after each burst of
// changes. Whoever changes the state (the live stream, an answer, a press) calls `update`; no
// caller chooses what to redraw: every subscriber renders from the whole state.

export function createStore(state) {
  const subscribers = [];
  let scheduled = false;
  const render = () => {
    scheduled = false;
    for (const subscriber of subscribers) subscriber(state);
  };
  return {
    state,
    /** Changes the state with `change(state)`; the views render once the current task is done,
     *  so an event that changes five things draws once, before the next paint. */
    update(change) {
      const result = change ? change(state) : undefined;
      if (!scheduled) {
        scheduled = true;
        queueMicrotask(render);
      }
      return result;
    },
    subscribe(subscriber) { subscribers.push(subscriber); },
  };
}

/** This browser's own choices (theme, view, target), kept in localStorage; a private window that
 *  refuses keeps them for the visit. */
export const saved = {
  get(key, fallback) {
    try { const value = localStorage.getItem(`unleashed.${key}`); return value === null ? fallback : JSON.parse(value); } catch { return fallback; }
  },
  set(key, value) {
    try { localStorage.setItem(`unleashed.${key}`, JSON.stringify(value)); } catch { /* kept for this visit only */ }
  },
};
