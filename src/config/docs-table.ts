// The settings table of docs/configuration.md, written from the rows of the settings table
// (test/config/config-docs.test.ts keeps the document equal to it).
import { SETTINGS } from './settings.js';

const code = (text: string): string => `\`${text}\``;

/** The markdown table of every setting: flags, variables, YAML keys, default, meaning. */
export function settingsTableMarkdown(): string {
  const lines = ['| flag | environment | YAML key | default | meaning |', '|---|---|---|---|---|'];
  for (const row of SETTINGS) {
    const file = row.secretFile === true;
    const flags = [
      `--${row.flag}`,
      ...(file ? [`--${row.flag}-file`] : []),
      ...(row.switch === true ? [`--no-${row.flag}`] : []),
    ];
    const variables = [row.env, ...(file ? [`${row.env}_FILE`] : [])];
    const keys = row.notInYaml === true ? '–' : [row.key, ...(file ? [`${row.key}_file`] : [])].map(code).join(', ');
    const defaultText = row.defaultText === 'none' ? 'none' : code(row.defaultText);
    const meaning = `${row.help}${row.repeatable === true ? ' (repeatable)' : ''}`;
    lines.push(
      `| ${flags.map(code).join(', ')} | ${variables.map(code).join(', ')} | ${keys} | ${defaultText} | ${meaning} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
