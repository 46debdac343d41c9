/**
 * Getting the person's attention when something they waited for happens
 * ("Wait for it"): besides the page's own notice, the document's title
 * while the tab is hidden, and a browser notification where the person
 * allowed them.
 */

let baseTitle: string | null = null;

/** Says `text` in the tab's title until the tab is shown again (only while it is hidden). */
function inTitle(text: string): void {
  baseTitle ??= document.title;
  document.title = `${text} · ${baseTitle}`;
  const shown = () => {
    if (document.visibilityState === 'hidden') return;
    document.removeEventListener('visibilitychange', shown);
    if (baseTitle !== null) document.title = baseTitle;
    baseTitle = null;
  };
  document.addEventListener('visibilitychange', shown);
}

/** Tells the person, wherever they are: the title while the tab is hidden, a notification when they allowed them and are elsewhere. */
export function tellAway(text: string): void {
  const hidden = document.visibilityState === 'hidden';
  if (hidden) inTitle(text);
  if ((hidden || !document.hasFocus()) && typeof Notification === 'function' && Notification.permission === 'granted') {
    try {
      new Notification(text, { tag: text });
    } catch {
      // some browsers only show notifications from a service worker: the title says it
    }
  }
}

/** Asks, once, whether the app may notify (on the person's own click, as browsers require). */
export function askToNotify(): void {
  if (typeof Notification !== 'function' || Notification.permission !== 'default') return;
  void Notification.requestPermission().catch(() => undefined);
}
