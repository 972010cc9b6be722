/**
 * The vocabulary the classification rules read in a reply's text: one pattern per meaning, pure data.
 * docs/classification.md lists what each one matches.
 * @module
 */

/** Greylisting: `Greylisted`, `graylist`, Postgrey. */
export const GREYLIST = /gr[ae]y[- ]?list|postgrey/i;

/**
 * A refusal of us that outweighs any mailbox wording or code: blocklists, reputation, spam and content filters,
 * SPF / DKIM / DMARC / authentication, reverse DNS, "policy", "access denied", our sender, NetEase's `HL:` / `MI:` /
 * `RP:` / `DT:` / `WM:` refusal codes (all about the sending IP, sender or content).
 */
export const REFUSES_US =
  /spamhaus|spamcop|barracuda|\bsorbs\b|uceprotect|\bspam|black ?list|block ?list|\bblocked\b|\b(?:rbl|dnsbl|dnsrbl|rhsbl)\b|reputation|\blisted (?:at|in|on|by)\b|\bbanned\b|\bspf\b|openspf|sender policy framework|\bdmarc\b|\bdkim\b|authenticat|\brdns\b|reverse (?:dns|hostname)|\bptr\b|\bpolic(?:y|ies)\b|access den(?:ied|y)|\bsender\b|virus|malware|phishing|unsafe content|(?:banned|spam) content|content (?:filter|restriction)|\bmacros\b|spoof|dynamic(?:ally[- ]assigned)? ip|\bmessages? from \S+ (?:weren't|were not|was not) sent|\bfiltered\b|unsolicited|inappropriate|suspicious|\bjunk\b|\bcomplain|misconfigur|\bh[ae]lo\b|\behlo\b|\b(?:HL|MI|RP|DT|WM):[A-Z]{3}\b/i;

/**
 * A refusal by policy that mailbox wording or a mailbox code outweighs: relaying, "denied", "refused",
 * "prohibited", "not authorized", "not allowed", an envelope rule, a message rejected or blocked.
 */
export const POLICY =
  /relay|rcpthosts|\bdenied\b|\brefused\b|prohibit|not (?:authori[sz]ed|permitted)|unauthori[sz]ed|(?<!name )not allowed|\benvelope\b|\bcannot be accepted\b|connection rejected|rejected by (?:the )?recipients?|(?:message|mail) (?:was |is )?(?:rejected|refused|blocked|not accepted)|not accepted from|do(?:es)? not accept (?:e-?)?mail from|service (?:is )?(?:unavailable|not available)|forbidden|gr[ae]y[- ]?list/i;

/**
 * A limit on us, not on the mailbox: a rate, a sending or relay quota, "receiving mail too quickly" (Gmail's
 * `5.2.1` rate reply included).
 */
export const RATE =
  /\brate[- ]?limit|\bthrottl|too (?:quickly|fast)|receiving mail at a rate|excessive (?:volume|unknown recipients)|unexpected volume|too much mail|(?:sending|submission|relay|email) (?:quota|limit)|daily (?:[\w-]+ ){0,3}(?:quota|limit)|limits? for how many|maximum rate|\bmax(?:imum)? (?:number of )?messages? per|frequency limit|too many (?:mails|messages|emails)(?! on the server)/i;

/** The message is too large (a limit on the message, never a full mailbox). */
export const SIZE =
  /message (?:size|length)|\bsize (?:limit|exceeds)|too (?:large|big)|exceeds? (?:the )?(?:fixed |maximum |allowed )*(?:message )?size|databytes/i;

/** The mailbox is disabled, inactive, suspended or closed. */
export const DISABLED =
  /disabled|deactivated|\binactive\b|suspended|account (?:is |has been )?(?:locked|closed|frozen)|no longer (?:active|in use|valid)|not accepting mail|deaktiviert|d[ée]sactiv[ée]|desactivad/i;

/** The mailbox is full. */
export const QUOTA =
  /quota|mailbox (?:is )?full|full mailbox|insufficient (?:system )?storage|storage (?:space )?(?:exceeded|full)|out of storage|exceeded (?:its |the )?storage|exhausted allowed storage|mailbox size limit|too many messages on the server|postfach (?:ist )?voll|bo[iî]te (?:aux lettres )?(?:est )?pleine|buz[oó]n (?:est[aá] )?lleno|casella (?:di posta )?piena|переполнен/i;

/** The mailbox does not exist. */
export const NOT_FOUND =
  /user unknown|unknown (?:user|recipient|mailbox|address|account|local part)|no such (?:user|mailbox|recipient|address|account|person)|(?:mailbox|user|recipient|address|account) (?:is )?(?:unavailable|not found|unknown|invalid|rejected|unallocated)|(?:does|do|is) ?(?:n[o']t|no) exists?|does ?n[o']t have an? (?:[\w.-]+ )?account|not (?:a )?valid (?:mailbox|recipient|user|address)|invalid (?:mailbox|recipient|user|address)|marked as invalid|unrouteable address|no mailbox|bad destination mailbox|unavailable (?:mail )?user|(?:user|mailbox|recipient)\b[^.;]{0,40}\bnot (?:found|exists?)\b|cannot deliver mail for|addressee unknown|benutzer (?:ist )?unbekannt|unbekannte[rn]? (?:benutzer|empf[äa]nger)|existiert nicht|utilisateur inconnu|adresse inexistante|usuario (?:desconocido|no existe)|utente (?:sconosciuto|inesistente)|нет такого/i;

/** Wording that speaks of the mail system, the protocol or the routing, not the mailbox. */
export const NOT_ABOUT_MAILBOX =
  /protocol|syntax|verif(?:y|ied|ication)|callout|configuration|internal error|system error|temporar|timeout|loops? back|\bloop\b|\bhops?\b|routing|\bdns\b|\btls\b|encrypt/i;

/**
 * Wording of a refusal about the session rather than the mailbox, after which a mail host should be left alone
 * for a while: too many errors in it (Postfix's `421 4.7.0 Error: too many errors`), too many invalid or unknown
 * recipients, too many connections, a rate limit.
 */
export const SESSION_LIMIT =
  /\btoo many (?:(?:smtp |protocol |syntax )?errors|(?:invalid|bad|unknown|failed|rejected|non-?existent|unresolvable) (?:recipients?|rcpts?|commands|addresses|users)|(?:concurrent |simultaneous |parallel |open )?(?:smtp )?(?:connections|sessions))\b|excessive (?:unknown|invalid) recipients|\brate[- ]?limit|\bthrottl/i;

/** A full envelope (`452 4.5.3` / `552 5.5.3 Too many recipients`): about the transaction, not the mailbox. */
export const ENVELOPE_FULL = /\btoo many recipients\b/i;

/**
 * A reply that names Microsoft's mail servers or tags (`*.protection.outlook.com`, Exchange Online Protection's
 * `AS(201806281)`, Outlook.com's `(S2017062302)`): it comes from Microsoft, also when the MX name is not known.
 */
export const MICROSOFT_SIGNED = /protection\.outlook\.com|\(S\d{10}\)|\bAS\(\d{6,12}\)/i;

/** An address in angle brackets, as servers echo the recipient (`550 5.1.1 <throttle@example.com>: ...`). */
const ECHOED_ADDRESS = /<[^<>@]*@[^<>]*>/g;

/**
 * `text` without the addresses it echoes: the recipient is ours to choose, so `<ratelimit@example.com>` or
 * `<spam@example.com>` must not turn a "user unknown" into a refusal about us.
 */
export function withoutEchoedAddresses(text: string): string {
  return text.includes('@') ? text.replace(ECHOED_ADDRESS, '<>') : text;
}

/**
 * Postfix's (and its policy servers') prefixes: `Recipient address rejected: X` says X about the recipient;
 * `Sender address rejected`, `Client host rejected`, `Helo command rejected` (also delayed to `RCPT TO`) are
 * about us.
 */
const PREFIX = /\b(Recipient address|Sender address|Client host|Helo command) rejected:\s*/i;

/** Who a prefixed reply speaks of, and what it says after its last prefix. */
export interface Prefixed {
  /** `recipient` for `Recipient address rejected:`, `us` for the sender, client and HELO prefixes. */
  readonly about: 'recipient' | 'us';
  /** The text after the prefix. */
  readonly rest: string;
}

/**
 * The Postfix-style prefix of `text`, or `null`. A relay may quote a downstream reply that carries its own
 * prefix (`undeliverable address: host x said: 550 5.1.1 <a>: Recipient address rejected: User unknown`); the
 * innermost (last) prefix speaks of the mailbox, unless an earlier one is about us.
 */
export function prefixOf(text: string): Prefixed | null {
  let about: Prefixed['about'] | null = null;
  let rest = text;
  for (let match = PREFIX.exec(rest); match !== null; match = PREFIX.exec(rest)) {
    const kind = match[1]!.toLowerCase() === 'recipient address' ? 'recipient' : 'us';
    if (about !== 'us') about = kind;
    rest = rest.slice(match.index + match[0].length);
  }
  return about === null ? null : { about, rest };
}
