/* The flags of `rein store`, shared by its declaration and its action without an import cycle. */

export interface CopyOptions {
  from: string;
  to: string;
  adopt?: boolean;
  json?: boolean;
}
