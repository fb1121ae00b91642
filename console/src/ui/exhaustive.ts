// Run-time lists of the values a generated type allows (roles, grant types…): types vanish at run
// time, so the list is written out and checked against the type. `every<Role>()([...])` does not
// compile while a value the API accepts is missing, nor with one it does not.
export function every<U extends string>() {
  return <const T extends readonly U[]>(values: T & ([Exclude<U, T[number]>] extends [never] ? unknown : { missing: Exclude<U, T[number]> })): T => values;
}
