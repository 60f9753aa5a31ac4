/// <reference lib="dom" />
/**
 * Browser tests: headless Chromium from Debian's `chromium` package driven by
 * `playwright-core`. Without `/usr/bin/chromium` every browser test file
 * registers one ignored test saying so, instead of its tests.
 *
 * Each page opened here records console errors and uncaught page errors
 * (a Content-Security-Policy violation is a console error); `finish()`
 * fails the test on any.
 */

import assert from "node:assert/strict";
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from "playwright-core";
import { fileURLToPath } from "node:url";

/** Where Debian's `chromium` package installs the browser. */
export const CHROMIUM = "/usr/bin/chromium";

/** Flags for a closed network: no background fetches that would be refused. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Whether the browser is installed. */
export const HAS_CHROMIUM: boolean = (() => {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
})();

/** Desktop and phone viewports the layout is checked at. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  mobile: { width: 390, height: 844 },
} as const;

const SCREENSHOTS = fileURLToPath(
  new URL("../__screenshots__/", import.meta.url),
);

/** A browser test's tools. */
export interface BrowserKit {
  browser: Browser;
  /** A fresh context (own cookies) and page, with error collection. */
  open(options?: BrowserContextOptions): Promise<OpenPage>;
  /** A fresh context and page carrying `signedIn`'s cookies: the same session at another size or colour scheme. */
  openWithSession(
    signedIn: OpenPage,
    options?: BrowserContextOptions,
  ): Promise<OpenPage>;
}

/** A page with its context and the errors seen on it. */
export interface OpenPage {
  context: BrowserContext;
  page: Page;
  errors: string[];
  /** Substrings of errors the test provokes on purpose (e.g. `status of 410`). */
  allowed: string[];
}

/**
 * Registers a browser test, or (once per file, when Chromium is missing) an
 * ignored test that says why. Playwright keeps a child process and pipes
 * open across the test's awaits, so the resource and op sanitizers are off.
 */
export function browserTest(
  name: string,
  fn: (kit: BrowserKit) => Promise<void>,
): void {
  if (!HAS_CHROMIUM) {
    registerSkipNotice();
    return;
  }
  Deno.test({
    name,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
      });
      const opened: OpenPage[] = [];
      const open = async (options: BrowserContextOptions = {}) => {
        const page = await openPage(browser, options);
        opened.push(page);
        return page;
      };
      try {
        await fn({
          browser,
          open,
          openWithSession: async (signedIn, options) => {
            const page = await open(options);
            await page.context.addCookies(await signedIn.context.cookies());
            return page;
          },
        });
        for (const page of opened) assertNoErrors(page, page.allowed);
      } finally {
        await browser.close();
      }
    },
  });
}

let skipNoticeRegistered = false;

function registerSkipNotice(): void {
  if (skipNoticeRegistered) return;
  skipNoticeRegistered = true;
  Deno.test({
    name:
      `browser tests skipped: ${CHROMIUM} is not installed (apt-get install chromium)`,
    ignore: true,
    fn: () => {},
  });
}

async function openPage(
  browser: Browser,
  options: BrowserContextOptions,
): Promise<OpenPage> {
  // Each context gets its own fresh profile directory from Playwright.
  const context = await browser.newContext({
    viewport: VIEWPORTS.desktop,
    ...options,
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") {
      errors.push(`console: ${message.text()} (${page.url()})`);
    }
  });
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
  return { context, page, errors, allowed: [] };
}

/**
 * Fails on console or page errors. Error statuses a test provokes on
 * purpose show up as console errors ("Failed to load resource"); pass them
 * in `expected` as substrings.
 */
export function assertNoErrors(
  opened: OpenPage,
  expected: readonly string[] = [],
): void {
  const unexpected = opened.errors.filter((error) =>
    !expected.some((text) => error.includes(text))
  );
  assert.deepEqual(unexpected, [], "the browser reported errors");
  opened.errors.length = 0;
}

/**
 * Saves `tests/__screenshots__/<name>.png` (the whole page) and
 * `<name>-top.png` (what the first screen shows).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SCREENSHOTS, { recursive: true });
  await capture(page, { path: `${SCREENSHOTS}${name}.png`, fullPage: true });
  await capture(page, { path: `${SCREENSHOTS}${name}-top.png` });
}

/**
 * One screenshot, taken again when Chromium could not produce a frame in
 * time (`Unable to capture screenshot`, seen on a loaded machine running
 * the suite in parallel); any other failure is thrown at once.
 */
async function capture(
  page: Page,
  options: { path: string; fullPage?: boolean },
): Promise<void> {
  for (let attempt = 1;; attempt++) {
    try {
      await page.screenshot(options);
      return;
    } catch (error) {
      const transient = /Unable to capture screenshot/.test(String(error));
      if (!transient || attempt === 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** Fails when the page scrolls sideways, then saves its screenshots as {@link screenshot} does. */
export async function checkLayout(page: Page, name: string): Promise<void> {
  assert.equal(
    await scrollsHorizontally(page),
    false,
    `${name} scrolls sideways`,
  );
  await screenshot(page, name);
}

/** Whether the page scrolls sideways (it never should). */
export async function scrollsHorizontally(page: Page): Promise<boolean> {
  return await page.evaluate(() =>
    document.documentElement.scrollWidth >
      document.documentElement.clientWidth
  );
}
