/* The flags of `rein init`, shared by its declaration and its action without a cycle. */
export interface InitOptions {
  workspace?: string;
  provider?: string;
  model?: string;
  baseUrl?: string;
  force?: boolean;
}
