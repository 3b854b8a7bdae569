/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!,
  );
}

/** A tagged template that escapes every interpolated value unless it is already `Html`. */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((value, index) => {
    const rendered = Array.isArray(value)
      ? value.map((item) => (item instanceof Html ? item.value : escapeHtml(String(item)))).join('')
      : value instanceof Html
        ? value.value
        : value === undefined || value === null || value === false
          ? ''
          : escapeHtml(String(value));
    out += rendered + strings[index + 1]!;
  });
  return new Html(out);
}

/** Trusted markup, such as the logout form oidc-provider renders. */
export function raw(markup: string): Html {
  return new Html(markup);
}
