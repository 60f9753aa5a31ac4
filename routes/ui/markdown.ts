/**
 * Markdown documents of the repository (an assessment's write-up) as HTML
 * for a page, through the pinned `marked` rather than a parser of our own:
 * GitHub-flavoured tables and fenced code are all these documents use, and
 * a parser is not ours to maintain. Raw HTML in a document is shown as
 * text, never passed through (the page's CSP would refuse a script, but an
 * element must not be rendered from text either); a relative link, which
 * names a file beside the document that this server does not serve, stays
 * as its text; tables scroll on their own on a narrow screen.
 *
 * @module
 */

import { Marked, type Tokens } from "marked";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A link's address as an attribute. Markdown lets an address hold character
 * references (`?a=1&amp;b=2`), which `marked` hands over as written; they
 * stay references here, as `marked`'s own renderer keeps them, where
 * escaping their `&` again would put `&amp;` itself into the address.
 */
function escapeHref(href: string): string {
  return href.replace(
    /[<>"']|&(?!#\d{1,7};|#[xX][\da-fA-F]{1,6};|[A-Za-z][A-Za-z\d]*;)/g,
    (c) => `&#${c.charCodeAt(0)};`,
  );
}

/** Whether `href` leads somewhere from a page of this server: an anchor or an absolute http(s) address. */
function servedHref(href: string): boolean {
  return href.startsWith("#") || /^https?:\/\//i.test(href);
}

const markdown = new Marked({
  async: false,
  gfm: true,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(token.text);
    },
    link(token: Tokens.Link): string {
      const text = this.parser.parseInline(token.tokens);
      if (!servedHref(token.href)) return text;
      return `<a href="${escapeHref(token.href)}">${text}</a>`;
    },
    image(token: Tokens.Image): string {
      return escapeHtml(token.text);
    },
  },
});

/** `text` (Markdown) as HTML for a page; see the module's notes on what it leaves out. */
export function markdownHtml(text: string): string {
  const html = markdown.parse(text, { async: false });
  return html
    .replaceAll("<table>", '<div class="table-wrap"><table>')
    .replaceAll("</table>", "</table></div>");
}
