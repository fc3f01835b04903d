import type { Feature } from '../core/feature.ts';
import { createMenuOp, deleteMenuOp, getMenuOp, listMenusOp, replaceMenuOp } from './menus-ops.ts';
import { publicGetMenuOp, publicListMenusOp } from './public-ops.ts';
import { menuTrashKind } from './trash.ts';
import { MENUS_COLLECTION } from './menus.ts';

export const menusFeature: Feature = {
  name: 'menus',
  publicCollections: [MENUS_COLLECTION],
  operations: [listMenusOp, getMenuOp, createMenuOp, replaceMenuOp, deleteMenuOp, publicListMenusOp, publicGetMenuOp],
  // Menus are a `site_config` kind, unique by slug there (core/site-config.ts).
  trash: [menuTrashKind],
};
