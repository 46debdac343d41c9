import type { AnyRecord, DeclaredType } from '@baton/client';
import { FieldTurnContext, useFieldTurn } from './fieldTurn';
import { mayTakeOver } from './format';
import { LockableField } from './LockableField';
import { lowerWords } from './schemaText';
import { fieldPlans, useTree } from './tree';

/**
 * A record's fields, each edited with the control its JSON Schema calls
 * for; starting to edit any of them takes the record's lock. "Edit anyway"
 * and "Notify me / wait" are offered as the type's lock policy allows.
 */
export function RecordFields({ type, record, name, moving = false }: { type: DeclaredType; record: AnyRecord; name: string; moving?: boolean }) {
  const tree = useTree();
  const turn = useFieldTurn();
  const plans = fieldPlans(type, record, name);
  const fields = plans.map((plan) => (
    <LockableField
      key={plan.field}
      record={record}
      field={plan.field}
      label={plan.label}
      noun={plan.noun}
      thing={`this ${lowerWords(type.name)}`}
      control={plan.control}
      schema={type.fields[plan.field]}
      required={type.required.includes(plan.field)}
      testId={plan.testId}
      takeover={mayTakeOver(tree.role, type.lock.takeover)}
      waitable={type.lock.wait}
      editable={tree.editable}
      me={tree.me}
      role={tree.role}
      moving={moving}
    />
  ));
  return plans.length > 1 ? <FieldTurnContext.Provider value={turn}>{fields}</FieldTurnContext.Provider> : <>{fields}</>;
}
