/**
 * A TypeDoc plugin that files every exported symbol under the seam its source lives in (src/bulk: "Bulk jobs",
 * src/dns: "DNS (Resolver seam)", ...), so that the reference index is grouped by seam rather than one flat list.
 * A symbol with its own `@category` tag keeps it. Loaded by typedoc.json ("plugin").
 */
import { Comment, CommentTag, Converter, ReflectionKind } from 'typedoc';

/** Source directory prefix → category, first match wins. */
const CATEGORIES = [
  ['src/bulk/', 'Bulk jobs'],
  ['src/postgres/', 'Durable job stores (mailvet/postgres)'],
  ['src/bullmq/', 'Worker fleet (mailvet/bullmq)'],
  ['src/http/', 'HTTP adapter'],
  ['src/dns/', 'DNS (Resolver seam)'],
  ['src/net/', 'DNS (Resolver seam)'],
  ['src/doctor/', 'Host diagnostics (doctor)'],
  ['src/smtp/', 'SMTP (Transport seam)'],
  ['src/classify/', 'SMTP (Transport seam)'],
  ['src/contracts/prober.ts', 'SMTP (Transport seam)'],
  ['src/syntax/', 'Syntax'],
  ['src/typo/', 'Typo suggestions'],
  ['src/data/', 'Lists'],
  ['src/checks/', 'Checks'],
  ['src/testing/', 'Testing'],
  ['src/cli/', 'CLI'],
  ['src/', 'Verifier'],
];

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const reflection of Object.values(context.project.reflections)) {
      const parent = reflection.parent;
      if (parent === undefined || !parent.kindOf(ReflectionKind.Project | ReflectionKind.Module)) continue;
      if (reflection.kindOf(ReflectionKind.Module)) continue;
      const file = reflection.sources?.[0]?.fileName?.replaceAll('\\', '/') ?? '';
      const found = CATEGORIES.find(([prefix]) => file.includes(prefix));
      if (found === undefined) continue;
      reflection.comment ??= new Comment();
      if (reflection.comment.blockTags.some((tag) => tag.tag === '@category')) continue;
      reflection.comment.blockTags.push(new CommentTag('@category', [{ kind: 'text', text: found[1] }]));
    }
  });
}
