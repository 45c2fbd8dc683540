<?php

declare(strict_types=1);

use TYPO3\CMS\Core\Utility\ExtensionManagementUtility;

defined('TYPO3') or die();

// Teaser element with its own FlexForm.
ExtensionManagementUtility::addTcaSelectItem(
    'tt_content',
    'CType',
    [
        'label' => 'LLL:EXT:site_demo/Resources/Private/Language/locallang_db.xlf:teaser.title',
        'value' => 'sitedemo_teaser',
        'icon' => 'content-card-group',
        'group' => 'default',
    ]
);
$GLOBALS['TCA']['tt_content']['types']['sitedemo_teaser'] = [
    'showitem' => '--div--;LLL:EXT:core/Resources/Private/Language/Form/locallang_tabs.xlf:general,
        --palette--;;general, --palette--;;headers, pi_flexform,
        --div--;LLL:EXT:core/Resources/Private/Language/Form/locallang_tabs.xlf:access,
        --palette--;;hidden, --palette--;;access',
];
ExtensionManagementUtility::addPiFlexFormValue(
    '*',
    'FILE:EXT:site_demo/Configuration/FlexForms/Teaser.xml',
    'sitedemo_teaser'
);
ExtensionManagementUtility::addPiFlexFormValue(
    '*',
    'FILE:EXT:site_demo/Configuration/FlexForms/DealerMap.xml',
    'sitedemo_dealermap'
);
