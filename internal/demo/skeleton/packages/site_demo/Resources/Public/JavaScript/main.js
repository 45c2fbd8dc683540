// Marks the document as script-capable and toggles the mobile navigation.
document.documentElement.classList.remove('no-js');
document.querySelectorAll('.main-nav > ul > li').forEach((item) => {
    item.addEventListener('focusin', () => item.classList.add('open'));
    item.addEventListener('focusout', () => item.classList.remove('open'));
});
