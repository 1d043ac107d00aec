/**
 * The simulated BMC's AccountService: one administrator account (the BMC's own user), its password changed by
 * `PATCH /redfish/v1/AccountService/Accounts/<id>` `{ "Password": "..." }` under the vendor's password policy, as
 * the vendors answer it:
 * - Dell iDRAC: account `2`, 8 to 20 characters, a refusal is a 400 `RAC1212` in ExtendedInfo; sessions survive;
 * - HPE iLO: account `1`, 8 to 39 characters, a refusal is a 400 with only the message id `PropertyValueBadParam`;
 * - Supermicro: account `2`, 8 to 19 characters of at least three classes; a change ends the user's sessions;
 * - OpenBMC (bmcweb): the account id is the user name, 8 to 20 characters, a refusal is a property annotation
 *   `Password@Message.ExtendedInfo` with `PropertyValueFormatError` (which real bmcweb words with the value; never
 *   echoed here); a change ends the user's sessions.
 * The factory password each family comes back with after a factory reset is here too.
 */
import type { SimBmc } from './sim-bmc.ts';
import type { VendorFamily } from './vendor-profile.ts';

export const ACCOUNTS = '/redfish/v1/AccountService/Accounts';

interface PasswordPolicy {
  minLength: number;
  maxLength: number;
  /** Character classes (upper, lower, digit, other) the password must have. */
  classes: number;
  /** A change ends the account's open sessions. */
  endsSessions: boolean;
}

const policies: Record<VendorFamily, PasswordPolicy> = {
  dell: { minLength: 8, maxLength: 20, classes: 1, endsSessions: false },
  hpe: { minLength: 8, maxLength: 39, classes: 1, endsSessions: false },
  supermicro: { minLength: 8, maxLength: 19, classes: 3, endsSessions: true },
  openbmc: { minLength: 8, maxLength: 20, classes: 2, endsSessions: true },
  unknown: { minLength: 8, maxLength: 20, classes: 1, endsSessions: false },
};

export function familyOfBmc(bmc: SimBmc): VendorFamily {
  return bmc.profile.family;
}

/** The id of the BMC's own account. */
export function accountIdOf(bmc: SimBmc): string {
  switch (familyOfBmc(bmc)) {
    case 'hpe':
    case 'unknown':
      return '1';
    case 'openbmc':
      return bmc.username;
    case 'dell':
    case 'supermicro':
      return '2';
    default:
      return '1';
  }
}

/** What a factory reset sets the password back to. */
export function factoryPasswordOf(bmc: SimBmc): string {
  switch (familyOfBmc(bmc)) {
    case 'dell':
      return 'calvin';
    case 'supermicro':
      return 'ADMIN';
    case 'openbmc':
      return '0penBmc';
    default:
      return `factory-${bmc.id}`;
  }
}

export function accountCollection(bmc: SimBmc): unknown {
  const id = `${bmc.linkPrefix}${ACCOUNTS}/${accountIdOf(bmc)}`;
  return {
    '@odata.id': `${bmc.linkPrefix}${ACCOUNTS}`,
    '@odata.type': '#ManagerAccountCollection.ManagerAccountCollection',
    Name: 'Accounts Collection',
    Members: [{ '@odata.id': id }],
    'Members@odata.count': 1,
  };
}

export function accountBody(bmc: SimBmc, now: number): unknown {
  const id = accountIdOf(bmc);
  return {
    '@odata.id': `${bmc.linkPrefix}${ACCOUNTS}/${id}`,
    '@odata.type': '#ManagerAccount.v1_8_0.ManagerAccount',
    Id: id,
    Name: 'User Account',
    UserName: bmc.username,
    RoleId: 'Administrator',
    Enabled: true,
    Locked: now < bmc.lockedUntil,
    Password: null,
  };
}

function classesOf(password: string): number {
  return [/[A-Z]/, /[a-z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((pattern) => pattern.test(password)).length;
}

/** The vendor's refusal of a password its policy does not take (the password itself is never in it). */
function policyRefusal(family: VendorFamily, policy: PasswordPolicy): unknown {
  const rule = `${policy.minLength} to ${policy.maxLength} characters${policy.classes > 1 ? ` of at least ${policy.classes} kinds` : ''}`;
  switch (family) {
    case 'dell':
      return {
        error: {
          code: 'Base.1.12.GeneralError',
          message: 'A general error has occurred. See ExtendedInfo for more information.',
          '@Message.ExtendedInfo': [{ MessageId: 'IDRAC.2.8.RAC1212', Message: `Unable to change the password because the password does not meet the password policy requirements (${rule}).`, Severity: 'Warning', Resolution: 'Enter a password that meets the password policy requirements and retry the operation.' }],
        },
      };
    case 'hpe':
      return { error: { code: 'iLO.0.10.ExtendedInfo', message: 'See @Message.ExtendedInfo for more information.', '@Message.ExtendedInfo': [{ MessageId: 'iLO.2.14.PropertyValueBadParam' }] } };
    case 'openbmc':
      return { 'Password@Message.ExtendedInfo': [{ '@odata.type': '#Message.v1_1_1.Message', MessageId: 'Base.1.13.0.PropertyValueFormatError', Message: `The value for the property Password is of a different format than the property can accept (${rule}).`, MessageSeverity: 'Warning', Resolution: 'Correct the value for the property in the request body and resubmit the request if the operation failed.' }] };
    default:
      return {
        error: {
          code: 'Base.v1_4_0.GeneralError',
          message: 'A general error has occurred. See ExtendedInfo for more information.',
          '@Message.ExtendedInfo': [{ MessageId: 'Base.1.4.PropertyValueFormatError', Message: `Password does not meet the complexity requirement (${rule}).`, Severity: 'Warning' }],
        },
      };
  }
}

/**
 * A PATCH of the BMC's account (already authenticated): the new password if the policy takes it (200 and the account),
 * else the vendor's 400. Other properties are not writable here.
 */
export function patchAccount(bmc: SimBmc, accountId: string, body: unknown, now: number): { status: number; body: unknown } {
  if (accountId !== accountIdOf(bmc)) return { status: 404, body: { error: { code: 'Base.1.8.ResourceMissingAtURI', message: `The resource at the URI ${ACCOUNTS}/${accountId} was not found.` } } };
  const password = (body as { Password?: unknown } | undefined)?.Password;
  if (typeof password !== 'string') {
    return { status: 400, body: { error: { code: 'Base.1.8.PropertyMissing', message: 'The property Password is a required property and must be included in the request.' } } };
  }
  const family = familyOfBmc(bmc);
  const policy = policies[family];
  const refused = bmc.refusePasswordChanges > 0 || password.length < policy.minLength || password.length > policy.maxLength || classesOf(password) < policy.classes || /[\s:"']/.test(password);
  if (refused) {
    if (bmc.refusePasswordChanges > 0) bmc.refusePasswordChanges--;
    bmc.counters.passwordChangesRefused++;
    return { status: 400, body: policyRefusal(family, policy) };
  }
  bmc.password = password;
  bmc.counters.passwordChanges++;
  bmc.consecutiveBadLogins = 0;
  if (policy.endsSessions && bmc.sessions) {
    for (const [token, session] of bmc.sessions) if (session.userName === bmc.username) bmc.sessions.delete(token);
  }
  return { status: 200, body: accountBody(bmc, now) };
}
